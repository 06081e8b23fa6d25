//go:build !race

package storecopy_test

// resumeChecks is how many cut points TestCopyResumes tries by default.
const resumeChecks = "12"
