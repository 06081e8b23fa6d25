package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lockedBuffer is a buffer a child process and the test can share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestMCPStdio runs `strata mcp` as a child process, as Claude Desktop
// does, remembers turns through it and reads them back in a context
// package; the store is the one STRATA_DB names, so the CLI sees them too.
func TestMCPStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db := filepath.Join(t.TempDir(), "s.db")
	cmd := exec.Command(os.Args[0], "mcp")
	cmd.Env = childEnv("STRATA_DB=" + db)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v (stderr: %s)", err, stderr.String())
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "remember", Arguments: map[string]any{
		"conversation": "trip",
		"turns": []map[string]any{
			{"role": "user", "name": "Ana", "content": "We booked the ferry to Hydra for the 14th of June.", "time": "2023-06-01T10:00:00Z", "ext_id": "t1"},
			{"role": "assistant", "content": "Noted: ferry to Hydra on 14 June.", "time": "2023-06-01T10:00:05Z", "ext_id": "t2"},
		},
	}})
	if err != nil || res.IsError {
		t.Fatalf("remember: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "context", Arguments: map[string]any{
		"conversation": "trip", "query": "when is the ferry?", "budget": 500}})
	if err != nil || res.IsError {
		t.Fatalf("context: %v %+v", err, res)
	}
	got := res.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(got, "Ana: We booked the ferry to Hydra for the 14th of June.") || !strings.Contains(got, "ferry to Hydra on 14 June") {
		t.Errorf("context text misses the remembered turns:\n%s", got)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "context", Arguments: map[string]any{"conversation": "trip", "budget": 0.5}})
	if err != nil || !res.IsError {
		t.Errorf("context with a fractional budget: %v %+v, want an error result", err, res)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v (stderr: %s)", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "strata mcp: serving "+db) {
		t.Errorf("stderr %q does not say what is served", stderr.String())
	}

	// The turns are in the store, for every other command.
	out, _, err := run(t, db, "", "search", "--conversation", "trip", "Hydra")
	if err != nil || !strings.Contains(out, "t1") {
		t.Errorf("search after the MCP session: %v\n%s", err, out)
	}
}
