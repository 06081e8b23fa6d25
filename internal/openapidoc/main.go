// Command openapidoc prints the OpenAPI document strata's HTTP server
// serves at /openapi.json, as a server over an empty SQLite store in a
// temporary folder answers it. CI lints the document and generates a
// TypeScript client from it.
//
// With -serve ADDR it serves that server on ADDR instead, with one token
// of namespace "ci", and prints "URL TOKEN" on one line once it listens:
// the generated client's round trip runs against it. It serves until its
// standard input closes or it is killed.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/httpapi"
	"github.com/strata-memory/strata/sqlite"
)

func main() {
	serve := flag.String("serve", "", "serve the API on this address (127.0.0.1:0 for any port) instead of printing the document")
	flag.Parse()
	if err := run(*serve, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "openapidoc:", err)
		os.Exit(1)
	}
}

func run(serve string, out io.Writer) error {
	dir, err := os.MkdirTemp("", "strata-openapidoc-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "strata.db"))
	if err != nil {
		return err
	}
	defer st.Close()
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New()})
	if err != nil {
		return err
	}
	opt := httpapi.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if serve == "" {
		s, err := httpapi.New(m, opt)
		if err != nil {
			return err
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
		if rec.Code != http.StatusOK {
			return fmt.Errorf("/openapi.json answered %d: %s", rec.Code, rec.Body)
		}
		_, err = out.Write(rec.Body.Bytes())
		return err
	}
	secret, tok, err := strata.NewToken("ci", "openapidoc", time.Now())
	if err != nil {
		return err
	}
	if err := st.PutToken(ctx, tok); err != nil {
		return err
	}
	opt.Tokens = st
	s, err := httpapi.New(m, opt)
	if err != nil {
		return err
	}
	s.SetReady(true)
	ln, err := net.Listen("tcp", serve)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	fmt.Fprintf(out, "http://%s %s\n", ln.Addr(), secret)
	io.Copy(io.Discard, os.Stdin)
	return hs.Close()
}
