package exports

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// EnvVar is one container env var that render emits. Value is ready for the
// container's value field, already escaped for Kubernetes $(VAR) expansion;
// when Secret is set the var reads that Secret key instead.
type EnvVar struct {
	Name   string        `json:"name"`
	Value  string        `json:"value,omitempty"`
	Secret *SecretKeyRef `json:"secret,omitempty"`
}

// HiddenPrefix starts the name of every hidden env var that Wire emits;
// user env vars should not use it.
const HiddenPrefix = "FW_"

// HiddenName returns the name of the hidden env var that carries part of a
// composed export wired into consumerEnv: HiddenPrefix + consumerEnv + "_" +
// part, such as FW_DATABASE_URL_PASSWORD for DATABASE_URL and PASSWORD. The
// consumer's name is kept as written, so distinct consumers never share a
// hidden var.
func HiddenName(consumerEnv, part string) string {
	return HiddenPrefix + consumerEnv + "_" + part
}

// Wire returns the env vars to emit, in this order, for an env var named
// consumerEnv that takes export e:
//   - Plain: one var with the literal value;
//   - Secret: one var with valueFrom.secretKeyRef;
//   - Composed: one hidden var per part (see HiddenName), then consumerEnv
//     whose value refers to them as $(FW_…). Kubernetes expands a reference
//     only to vars listed earlier in the same container, so the order must
//     be kept.
//
// Kubernetes inserts a part's value as it is, without URL escaping; a
// password inside a URL must therefore be URL-safe. The catalog charts
// generate alphanumeric passwords; a password chosen by hand for a chart
// must avoid characters such as @ : / ? # % to work in connection_string
// (the separate password export has no such limit).
func Wire(consumerEnv string, e Export) []EnvVar {
	switch e.Kind {
	case Plain:
		return []EnvVar{{Name: consumerEnv, Value: escapeDollar(e.Value)}}
	case Secret:
		if e.Secret == nil {
			return nil
		}
		s := *e.Secret
		return []EnvVar{{Name: consumerEnv, Secret: &s}}
	case Composed:
		out := make([]EnvVar, 0, len(e.Parts)+1)
		names := make(map[string]string, len(e.Parts))
		for _, p := range e.Parts {
			v := EnvVar{Name: HiddenName(consumerEnv, p.Name)}
			if p.Secret != nil {
				s := *p.Secret
				v.Secret = &s
			} else {
				v.Value = escapeDollar(p.Value)
			}
			names[p.Name] = v.Name
			out = append(out, v)
		}
		return append(out, EnvVar{Name: consumerEnv, Value: renameRefs(e.Template, names)})
	default:
		return nil
	}
}

// escapeDollar writes every "$" as "$$" so Kubernetes expansion yields the
// text unchanged.
func escapeDollar(s string) string {
	return strings.ReplaceAll(s, "$", "$$")
}

// renameRefs rewrites the $(part) references of a template to the hidden
// var names, keeping "$$" escapes and any other text as is.
func renameRefs(tmpl string, names map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] != '$' || i+1 >= len(tmpl) {
			b.WriteByte(tmpl[i])
			continue
		}
		switch tmpl[i+1] {
		case '$':
			b.WriteString("$$")
			i++
			continue
		case '(':
			if end := strings.IndexByte(tmpl[i+2:], ')'); end >= 0 {
				if hidden, ok := names[tmpl[i+2:i+2+end]]; ok {
					b.WriteString("$(" + hidden + ")")
					i += 2 + end
					continue
				}
			}
		}
		b.WriteByte('$')
	}
	return b.String()
}

// Checksum returns a stable hex SHA-256 over resolved exports, for the
// consumer's pod-template annotation: a change of an export's kind, literal
// value, Secret name or key, parts or template changes the sum, so
// consumers roll. The map key is the caller's name for each reference (such
// as "postgres/connection_string"). Secret values are never read, so the
// sum does not change when a password rotates inside its Secret;
// descriptions do not count.
func Checksum(exports map[string]Export) string {
	h := sha256.New()
	var buf []byte
	field := func(s string) {
		// Length-prefixed fields keep the encoding unambiguous: no field
		// can fake a separator.
		buf = strconv.AppendInt(buf[:0], int64(len(s)), 10)
		buf = append(buf, ':')
		buf = append(buf, s...)
		h.Write(buf)
	}
	ref := func(r *SecretKeyRef) {
		if r == nil {
			field("")
			return
		}
		field("secret:" + r.Name)
		field(r.Key)
	}
	for _, name := range slices.Sorted(maps.Keys(exports)) {
		e := exports[name]
		field(name)
		field(e.Key)
		field(e.Kind.String())
		field(e.Value)
		ref(e.Secret)
		field(strconv.Itoa(len(e.Parts)))
		for _, p := range e.Parts {
			field(p.Name)
			field(p.Value)
			ref(p.Secret)
		}
		field(e.Template)
	}
	return hex.EncodeToString(h.Sum(nil))
}
