package load

import (
	"bytes"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// yamlErrorLine finds the line of a YAML syntax error that yaml.v3 reports
// at the start of the enclosing block (its context) rather than where the
// parser stopped: an indentation error on line 7 of a mapping that begins
// on line 2 is reported at line 2. The line it stopped at is the first
// whose prefix of the document fails with the same message; found by
// bisection between the reported line and the end, and checked, since a
// cut document may fail for reasons of its own (an open flow collection).
// It returns the reported line when nothing better is found.
func yamlErrorLine(data []byte, reported int, msg string) int {
	lines := bytes.SplitAfter(data, []byte("\n"))
	if reported < 1 || reported >= len(lines) || len(lines) > 20000 {
		return reported
	}
	fails := func(n int) bool { // the first n lines fail with msg
		var node yaml.Node
		err := yaml.Unmarshal(bytes.Join(lines[:n], nil), &node)
		if err == nil {
			return false
		}
		_, m := splitYAMLError(err)
		return m == msg
	}
	lo, hi := reported, len(lines) // fails(hi) holds: the whole document
	if !fails(hi) {
		return reported
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if fails(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if hi <= reported || !fails(hi) || fails(hi-1) {
		return reported
	}
	return hi
}

// splitYAMLError splits yaml.v3's "yaml: line N: msg" into N (0 when
// absent) and msg.
func splitYAMLError(err error) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, tail, ok := strings.Cut(rest, ": "); ok {
			if l, err := strconv.Atoi(n); err == nil {
				return l, tail
			}
		}
	}
	return 0, msg
}

// lineStart is the column of the first character of line n (1-based) that
// is not a space, or 1.
func lineStart(data []byte, n int) int {
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(data, '\n')
		if j < 0 {
			return 1
		}
		data = data[j+1:]
	}
	if j := bytes.IndexByte(data, '\n'); j >= 0 {
		data = data[:j]
	}
	return len(data) - len(bytes.TrimLeft(data, " ")) + 1
}
