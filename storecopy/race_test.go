//go:build race

package storecopy_test

// resumeChecks is how many cut points TestCopyResumes tries by default:
// fewer under the race detector, which makes each copy many times slower.
const resumeChecks = "4"
