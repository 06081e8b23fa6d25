package main

import (
	"context"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	stratamcp "github.com/strata-memory/strata/mcp"
)

// runMCP serves the store as a Model Context Protocol server over standard
// input and output, with the same store and configuration as every other
// command. Standard output carries the protocol only; what strata has to
// say goes to standard error.
func runMCP(ctx context.Context, m *Main, args []string) error {
	fs := m.command("mcp", "[--db PATH] [--config FILE]")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("mcp: takes no arguments, got %q", fs.Args())
	}
	set, err := m.resolve(fs.g)
	if err != nil {
		return err
	}
	set.longRunning = true
	a, err := m.openSettings(ctx, set)
	if err != nil {
		return err
	}
	defer a.Close()
	fmt.Fprintf(m.Stderr, "strata mcp: serving %s (namespace %q) over stdio\n", showDB(a.set.DB), a.mem.Namespace())
	t := &mcp.IOTransport{Reader: io.NopCloser(m.Stdin), Writer: nopWriteCloser{m.Stdout}}
	if err := stratamcp.Serve(ctx, a.mem, version, t); err != nil && ctx.Err() == nil {
		return fmt.Errorf("mcp: %w", err)
	}
	return nil
}

// nopWriteCloser is a writer whose Close does nothing: the session ending
// does not close the process's standard output.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
