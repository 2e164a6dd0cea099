package layout

import (
	"strconv"
	"strings"
)

// A pull request's preview is an environment of its own: its name is
// "pr-<N>", the GitHub deployment environment it is reported as, and its
// objects live in the namespace "<project>-pr<N>" on the platform's
// previews cluster, apart from the project's own namespace.
const previewPrefix = "pr-"

// PreviewEnvironment is the environment name of pull request pr's
// preview.
func PreviewEnvironment(pr int) string { return previewPrefix + strconv.Itoa(pr) }

// PreviewOf reports which pull request's preview an environment name
// names, and whether it names one: "pr-" and a positive number without
// leading zeros.
func PreviewOf(env string) (int, bool) {
	digits, ok := strings.CutPrefix(env, previewPrefix)
	if !ok || digits == "" || digits[0] == '0' || len(digits) > 9 {
		return 0, false
	}
	for _, r := range digits {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil
}

// PreviewNamespace is the namespace of a project's preview for pull
// request pr.
func PreviewNamespace(project string, pr int) string {
	return project + "-pr" + strconv.Itoa(pr)
}
