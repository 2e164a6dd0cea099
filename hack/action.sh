#!/usr/bin/env bash
# The run step of action.yml: turns the action's inputs (INPUT_* variables)
# into a render or verify command line.
set -euo pipefail

bin="${RUNNER_TEMP:?}/fleetwright-bin"
if [[ -n "${GITHUB_TOKEN:-}" ]]; then
	echo "::add-mask::${GITHUB_TOKEN}"
fi

# Extra arguments, split on white space. Never evaluated: inputs of a
# workflow_dispatch come from people, not from the workflow's author.
read -r -a extra <<<"${INPUT_ARGS:-}"
path="${INPUT_PATH:-.}"
opts=()
[[ "${INPUT_OFFLINE:-false}" == "true" ]] && opts+=(--offline)

case "${INPUT_COMMAND:?the command input is required}" in
validate)
	exec "$bin/render" validate "${extra[@]}" "$path"
	;;
render)
	[[ -n "${INPUT_MODE:-}" ]] && opts+=(--mode "$INPUT_MODE")
	[[ -n "${INPUT_OUT:-}" ]] && opts+=(--out "$INPUT_OUT")
	[[ -n "${INPUT_FLEET_REPO:-}" ]] && opts+=(--fleet-repo "$INPUT_FLEET_REPO")
	[[ -n "${INPUT_FLEET_BRANCH:-}" ]] && opts+=(--fleet-branch "$INPUT_FLEET_BRANCH")
	exec "$bin/render" "${opts[@]}" "${extra[@]}" "$path"
	;;
review)
	exec "$bin/render" review --diff-file "$RUNNER_TEMP/fleetwright.diff" "${extra[@]}" "$path"
	;;
diff)
	exec "$bin/render" review --post=false --diff-file "$RUNNER_TEMP/fleetwright.diff" "${extra[@]}" "$path"
	;;
verify)
	vopts=()
	[[ -n "${INPUT_APPS:-}" ]] && vopts+=(--apps "$INPUT_APPS")
	exec "$bin/verify" "${vopts[@]}" "${extra[@]}" "$path"
	;;
new | pause | resume | scale | rollback | delete | history | template)
	exec "$bin/render" "$INPUT_COMMAND" "${extra[@]}"
	;;
*)
	echo "::error::unknown command '${INPUT_COMMAND}': use validate, render, review, diff, verify, new, pause, resume, scale, rollback, delete, history or template"
	exit 2
	;;
esac
