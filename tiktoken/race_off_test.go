//go:build !race

package tiktoken

const raceOn = false
