// Package actiontest runs the repository's action.yml the way a GitHub
// runner does: each step in order, skipping those whose if: is false, with
// the inputs substituted into its env, the INPUT_* variables, a
// GITHUB_OUTPUT file per step (read back for steps.ID.outputs), and
// GITHUB_STEP_SUMMARY, GITHUB_PATH, RUNNER_TEMP and RUNNER_TOOL_CACHE in
// temporary folders. uses: steps (setup-go) are recorded, not run.
//
// The release tests serve archives made by internal/release from a
// loopback HTTPS server, and run the action with a PATH that has no go.
package actiontest
