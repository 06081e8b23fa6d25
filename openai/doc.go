// Package openai is a strata.Completer over the official OpenAI Go SDK
// (github.com/openai/openai-go/v3).
//
// It speaks the Chat Completions API (POST {base}/chat/completions), which
// OpenAI serves and which local servers imitate: Ollama, vLLM, the
// llama.cpp server and LM Studio. Point Config.BaseURL at one of them:
//
//	c, err := openai.New(openai.Config{
//		BaseURL: "http://127.0.0.1:11434/v1", // Ollama
//		Model:   "qwen2.5:7b",
//	})
//	out, err := c.Complete(ctx, strata.CompletionRequest{System: sys, User: text, MaxTokens: 400})
//
// A Client makes one attempt per call: the SDK's own retries are off, and
// failures come back as *strata.ProviderError with Retryable set, so that
// the engine decides whether and when to try again. Rate limits (429),
// request timeouts (408), server errors (5xx), broken connections and the
// Client's own Timeout are retryable; refused requests (other 4xx) and
// replies that cannot be read are not. When the caller's ctx ends, the
// error wraps ctx.Err() and is not retryable.
//
// Requests are sent with temperature 0, so that summaries are as
// reproducible as the server allows, and with "max_tokens" rather than
// "max_completion_tokens", which the SDK also offers: every
// OpenAI-compatible server reads the older field, while some accept the
// newer one and silently ignore it (Ollama's /v1 endpoint and the
// llama-cpp-python server do), which would leave replies unbounded.
// OpenAI accepts max_tokens for its chat models but rejects it, like
// temperature 0, for its reasoning models (the o-series and gpt-5).
//
// The Client reads no environment variables itself; FromEnv builds a
// Config from the STRATA_LLM_* variables when the caller wants that.
package openai
