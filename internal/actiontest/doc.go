// Package actiontest runs the repository's action.yml the way a GitHub
// runner does: each run step in order, with the inputs substituted into its
// env, the INPUT_* variables, and GITHUB_OUTPUT, GITHUB_STEP_SUMMARY and
// GITHUB_EVENT_PATH files in a temporary folder.
package actiontest
