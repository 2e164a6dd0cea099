package hint

import (
	"math/big"
	"testing"
)

func TestSuggest(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		s          string
		candidates []string
		want       string
	}{
		{"replica", []string{"replicas", "port"}, "replicas"},
		{"dpeends_on", []string{"depends_on", "name"}, "depends_on"}, // a swap is one edit
		{"PORT", []string{"port"}, "port"},
		{"xyz", []string{"image", "build"}, ""},
		{"anything", nil, ""},
		{"env_from", []string{"env", "image"}, ""},                   // a part, not a typo
		{"health", []string{"health_check", "port"}, "health_check"}, // half of it
		{"ports", []string{"port", "image"}, "port"},
		{"prot", []string{"port"}, "port"},
		{"ab", []string{"cd"}, ""}, // two edits of two letters is another word
		{"tls", []string{"url"}, ""},
		{"volumne", []string{"volumes", "value"}, "volumes"},
		{"imgae", []string{"image", "name"}, "image"},
		{"secret", []string{"secret_ref", "value"}, "secret_ref"},
	} {
		if got := Suggest(tt.s, tt.candidates); got != tt.want {
			t.Errorf("Suggest(%q, %q) = %q, want %q", tt.s, tt.candidates, got, tt.want)
		}
	}
}

func TestDistance(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "abc", 0}, {"abc", "acb", 1}, {"kitten", "sitting", 3}, {"", "ab", 2}, {"é", "e", 1},
	} {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestTypeNameAndNumber(t *testing.T) {
	t.Parallel()
	if got := TypeName("object"); got != "a map" {
		t.Errorf("TypeName(object) = %q", got)
	}
	if got := TypeName("integer or null"); got != "integer or null" {
		t.Errorf("TypeName(integer or null) = %q", got)
	}
	for r, want := range map[string]string{"3": "3", "1/2": "0.5", "-7/1": "-7"} {
		v, _ := new(big.Rat).SetString(r)
		if got := Number(v); got != want {
			t.Errorf("Number(%s) = %q, want %q", r, got, want)
		}
	}
	if got := Number(nil); got != "?" {
		t.Errorf("Number(nil) = %q", got)
	}
}
