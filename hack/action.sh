#!/usr/bin/env bash
# The run step of action.yml: turns the action's inputs (INPUT_* variables)
# into a render or verify command line.
set -euo pipefail

# The install step's folder: the cached release, or the source build's.
bin="${FLEETWRIGHT_BIN:-${RUNNER_TEMP:?}/fleetwright-bin}"

# command_data escapes a value for the data part of a workflow command, as
# GitHub's toolkit does, so that a "%", CR or LF in it cannot end the
# command and start another one.
command_data() {
	local s=${1//'%'/%25}
	s=${s//$'\r'/%0D}
	s=${s//$'\n'/%0A}
	printf '%s' "$s"
}

if [[ -n "${GITHUB_TOKEN:-}" ]]; then
	echo "::add-mask::$(command_data "$GITHUB_TOKEN")"
fi

# Extra arguments, split on white space (spaces, tabs, CRs and newlines, over
# all lines of a multi-line input). Never evaluated and never globbed: inputs
# of a workflow_dispatch come from people, not from the workflow's author.
extra=()
args="${INPUT_ARGS:-}"
IFS=$' \t\n' read -r -d '' -a extra <<<"${args//$'\r'/ }" || true
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
promote)
	[[ -n "${INPUT_MODE:-}" ]] && opts+=(--mode "$INPUT_MODE")
	[[ -n "${INPUT_OUT:-}" ]] && opts+=(--out "$INPUT_OUT")
	[[ -n "${INPUT_FLEET_REPO:-}" ]] && opts+=(--fleet-repo "$INPUT_FLEET_REPO")
	[[ -n "${INPUT_FLEET_BRANCH:-}" ]] && opts+=(--fleet-branch "$INPUT_FLEET_BRANCH")
	exec "$bin/render" promote --repo "$path" "${opts[@]}" "${extra[@]}"
	;;
preview)
	[[ -n "${INPUT_MODE:-}" ]] && opts+=(--mode "$INPUT_MODE")
	[[ -n "${INPUT_OUT:-}" ]] && opts+=(--out "$INPUT_OUT")
	[[ -n "${INPUT_FLEET_REPO:-}" ]] && opts+=(--fleet-repo "$INPUT_FLEET_REPO")
	[[ -n "${INPUT_FLEET_BRANCH:-}" ]] && opts+=(--fleet-branch "$INPUT_FLEET_BRANCH")
	exec "$bin/render" preview --repo "$path" "${opts[@]}" "${extra[@]}"
	;;
new | pause | resume | scale | rollback | delete | history | template)
	exec "$bin/render" "$INPUT_COMMAND" "${extra[@]}"
	;;
*)
	echo "::error::unknown command '$(command_data "$INPUT_COMMAND")': use validate, render, review, diff, verify, promote, preview, new, pause, resume, scale, rollback, delete, history or template"
	exit 2
	;;
esac
