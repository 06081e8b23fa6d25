//go:build race

package tiktoken

// raceOn says the tests run with the race detector, under which
// sync.Pool drops items at random and allocation counts mean nothing.
const raceOn = true
