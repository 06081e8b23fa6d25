package fleetgen

import "strings"

// staticText joins the fixed vocabularies and templates, so identifiers
// are drawn outside them.
func staticText() string {
	var parts []string
	parts = append(parts, systemPrompt)
	for _, xs := range [][]string{csNouns, csSuffixes, csMethods, testStates, testExpects, dartMethods, dartBehaviours, xunitFrames, xunitAsyncFrames, sqlFrames, aspnetFrames, flutterFrames, logTags, logMsgs, fgsFrames, looperFrames, ansibleTasks, csProjects, gradleNotes} {
		parts = append(parts, xs...)
	}
	for _, w := range csWarnings {
		parts = append(parts, w.code, w.msg)
	}
	for _, e := range csErrorMsgs {
		parts = append(parts, e.msg)
	}
	for _, d := range dartFeatures {
		parts = append(parts, d.dir, d.class)
	}
	for _, ls := range mustLines {
		parts = append(parts, ls...)
	}
	for _, p := range configPaths {
		parts = append(parts, p)
	}
	for _, d := range pubDeps {
		parts = append(parts, d[0]+": ^"+d[1])
	}
	return strings.Join(parts, "\x00")
}
