package strata

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"strings"
	"time"
)

// This file holds the rules of bearer tokens: what a token looks like, how
// it is stored (only its SHA-256, so that several server processes share
// the tokens through the store and a copy of the database leaks none), and
// how a request's token maps to the one namespace it may read and write.

// TokenPrefix starts every token, so that a leaked one is easy to spot.
const TokenPrefix = "strata_"

// Token is a bearer token as the store keeps it: never the secret itself.
type Token struct {
	ID        string    `json:"id"` // public: names the token in lists and revocations
	Namespace string    `json:"namespace"`
	Label     string    `json:"label,omitempty"`
	Hash      string    `json:"-"` // hex SHA-256 of the secret
	Created   time.Time `json:"created"`
	Revoked   time.Time `json:"revoked,omitzero"`
}

// TokenStore keeps bearer tokens. It is a separate interface from Store:
// only the commands and the server that deal with tokens need it.
type TokenStore interface {
	// PutToken stores a new token. ECONFLICT if its ID or hash is taken.
	PutToken(ctx context.Context, t Token) error
	// TokenByHash returns the token whose secret hashes to hash, revoked
	// or not. ENOTFOUND if there is none.
	TokenByHash(ctx context.Context, hash string) (Token, error)
	// Tokens lists the tokens of a namespace ("" for every namespace),
	// oldest first, revoked ones included.
	Tokens(ctx context.Context, namespace string) ([]Token, error)
	// RevokeToken marks a token revoked at at and returns it; revoking
	// again keeps the first time. ENOTFOUND for an unknown ID.
	RevokeToken(ctx context.Context, id string, at time.Time) (Token, error)
}

// NewToken makes a token for namespace: the secret, to be shown once, and
// the record to store. EINVALID for an empty namespace.
func NewToken(namespace, label string, now time.Time) (string, Token, error) {
	if err := ValidateNamespace(namespace); err != nil {
		return "", Token{}, Errorf(EINVALID, "token: %s", err.(*Error).Message)
	}
	if err := CheckText("label", label); err != nil {
		return "", Token{}, Errorf(EINVALID, "token: %s", err.(*Error).Message)
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", Token{}, err
	}
	enc := base32.StdEncoding.WithPadding(base32.NoPadding)
	secret := TokenPrefix + strings.ToLower(enc.EncodeToString(b[:]))
	var id [6]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", Token{}, err
	}
	return secret, Token{ID: "tok_" + hex.EncodeToString(id[:]), Namespace: namespace, Label: label,
		Hash: HashToken(secret), Created: now.UTC()}, nil
}

// HashToken is how a secret is stored and looked up.
func HashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Authenticate returns the token a request's secret belongs to, if it is
// valid and not revoked. Every failure is the same ENOTFOUND error, so
// that a caller learns nothing about which tokens exist.
func Authenticate(ctx context.Context, ts TokenStore, secret string) (Token, error) {
	denied := Errorf(ENOTFOUND, "invalid or revoked token")
	if !strings.HasPrefix(secret, TokenPrefix) {
		return Token{}, denied
	}
	hash := HashToken(secret)
	t, err := ts.TokenByHash(ctx, hash)
	if err != nil {
		if ErrorCode(err) == ENOTFOUND {
			return Token{}, denied
		}
		return Token{}, err
	}
	if subtle.ConstantTimeCompare([]byte(t.Hash), []byte(hash)) != 1 || !t.Revoked.IsZero() {
		return Token{}, denied
	}
	return t, nil
}
