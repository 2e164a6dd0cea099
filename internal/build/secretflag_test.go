package build

import (
	"strings"
	"testing"
)

func TestParseSecretFlag(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		id      string
		src     SecretSource
		wantErr string
	}{
		{in: "id=npm,env=NPM_TOKEN", id: "npm", src: SecretSource{Env: "NPM_TOKEN"}},
		{in: "id=netrc,src=/home/ci/.netrc", id: "netrc", src: SecretSource{File: "/home/ci/.netrc"}},
		{in: "file=a.txt,id=x", id: "x", src: SecretSource{File: "a.txt"}},
		{in: "id=x", wantErr: "want id=<id> and one of env=<variable> or src=<file>"},
		{in: "id=x,env=A,src=b", wantErr: "one of env"},
		{in: "env=A", wantErr: "want id=<id>"},
		{in: "id=x,value=hunter2", wantErr: `unknown key "value"`},
		{in: "id=x,env=", wantErr: "want id=<id>,env=<variable> or id=<id>,src=<file>"},
		{in: "", wantErr: "want id="},
	}
	for _, tt := range tests {
		id, src, err := ParseSecretFlag(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: err = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || id != tt.id || src != tt.src {
			t.Errorf("%q = %q %+v %v, want %q %+v", tt.in, id, src, err, tt.id, tt.src)
		}
	}
}

// FuzzParseSecretFlag: what the parser accepts names an id and exactly one
// source, each taken from the input.
func FuzzParseSecretFlag(f *testing.F) {
	for _, s := range []string{"id=npm,env=NPM_TOKEN", "id=a,src=/x", "id=,env=", "a=b=c,id=d,file=e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, src, err := ParseSecretFlag(s)
		if err != nil {
			return
		}
		if id == "" || (src.Env == "") == (src.File == "") {
			t.Fatalf("%q accepted as %q %+v", s, id, src)
		}
		if !strings.Contains(s, "id="+id) || !strings.Contains(s, src.Env+src.File) {
			t.Fatalf("%q gave values it does not hold: %q %+v", s, id, src)
		}
	})
}
