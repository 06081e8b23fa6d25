package checkpoint_test

import (
	"context"
	"fmt"

	"github.com/strata-memory/strata/compact/checkpoint"
)

func ExampleWriter_Checkpoint() {
	span := []checkpoint.Entry{
		{Role: "user", Kind: "text", Text: "The upload endpoint rejects 30 MB files. Raise the limit to 50 MB, and don't touch the auth code."},
		{Role: "assistant", Kind: "tool_call", Name: "bash", CallID: "1", Text: `{"command": "grep -rn MaxUploadSize internal/"}`},
		{Role: "tool", Kind: "tool_result", Name: "bash", CallID: "1", Text: "internal/upload/limits.go:12:const MaxUploadSize = 25 << 20"},
		{Role: "assistant", Kind: "tool_call", Name: "edit_file", CallID: "2", Text: `{"path": "internal/upload/limits.go", "old_string": "25 << 20", "new_string": "50 << 20"}`},
		{Role: "tool", Kind: "tool_result", Name: "edit_file", CallID: "2", Text: "ok"},
		{Role: "assistant", Kind: "tool_call", Name: "bash", CallID: "3", Text: `{"command": "go test ./internal/upload/..."}`},
		{Role: "tool", Kind: "tool_result", Name: "bash", CallID: "3", Text: "ok  \texample.com/app/internal/upload\t0.02s"},
		{Role: "assistant", Kind: "text", Text: "Raised `MaxUploadSize` to 50 MB. Next, I'll update the API docs."},
	}
	w, err := checkpoint.New(checkpoint.Options{}) // no model: extractive
	if err != nil {
		panic(err)
	}
	res, err := w.Checkpoint(context.Background(), span, "")
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text)
	fmt.Println(res.Mode, len(res.Ledger), "identifiers")
	// Output:
	// ## Goal
	// The upload endpoint rejects 30 MB files. Raise the limit to 50 MB, and don't touch the auth code.
	//
	// ## Constraints & Preferences
	// - Raise the limit to 50 MB, and don't touch the auth code.
	//
	// ## Progress
	// ### Done
	// - [x] Edited `internal/upload/limits.go`
	// - [x] `go test ./internal/upload/...` passes
	// - [x] Raised `MaxUploadSize` to 50 MB.
	//
	// ## Next Steps
	// 1. Next, I'll update the API docs.
	//
	// ## Critical Context
	// - paths: example.com/app/internal/upload, internal/upload/limits.go:12
	// - command: grep -rn MaxUploadSize internal/
	// extractive 9 identifiers
}
