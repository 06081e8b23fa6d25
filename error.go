package strata

import (
	"errors"
	"fmt"
)

// Error codes. They say what kind of failure happened so that transports
// (the CLI exit status, HTTP status codes) can map them in one place.
const (
	EINVALID  = "invalid"  // the caller's input is wrong
	ENOTFOUND = "notfound" // the named thing does not exist
	ECONFLICT = "conflict" // the write conflicts with stored state
	EINTERNAL = "internal" // a bug or an unexpected failure below
)

// Error is strata's coded error.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Message }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL
// for any other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}
