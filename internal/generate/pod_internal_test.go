package generate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/fleetwright/fleetwright/internal/spec"
)

func TestExpandable(t *testing.T) {
	t.Parallel()
	earlier := map[string]bool{"HOST": true, "PORT": true}
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"$(HOST):$(PORT)", "$(HOST):$(PORT)"},
		{"$(OTHER)", "$$(OTHER)"},
		{"$$(HOST)", "$$(HOST)"},   // the user's literal $(HOST)
		{"pa$$word", "pa$$$$word"}, // two dollars reach the container
		{"$5 and $", "$5 and $"},   // a lone $ is literal for Kubernetes already
		{"$(HOST", "$$(HOST"},      // unterminated
		{"$(HOST)$(SELF)", "$(HOST)$$(SELF)"},
		{"$$$(HOST)", "$$$$$(HOST)"}, // a literal $$ then the reference
		{"x$(HOST)y$(", "x$(HOST)y$$("},
		{"$()", "$$()"},
	} {
		if got := expandable(tc.in, earlier); got != tc.want {
			t.Errorf("expandable(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := expandable("$(HOST)", nil); got != "$$(HOST)" {
		t.Errorf("no earlier entries: %q", got)
	}
}

// TestExpandableRoundTrip expands the output as the kubelet does and
// checks each literal reaches the container as the user wrote it.
func TestExpandableRoundTrip(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"pa$$word", "$(X)", "$", "a$b", "$$$", "$(", "))$((", "$$(X)"} {
		out := kubeExpand(expandable(in, nil), nil)
		want := strings.ReplaceAll(in, "$$(", "$(") // $$( is the documented escape of $(
		if out != want {
			t.Errorf("%q → %q → %q, want %q", in, expandable(in, nil), out, want)
		}
	}
	if got := kubeExpand(expandable("http://$(H)/$(Z)", map[string]bool{"H": true}), map[string]string{"H": "h", "Z": "z"}); got != "http://h/$(Z)" {
		t.Errorf("reference: %q", got)
	}
}

// kubeExpand follows Kubernetes' third_party/forked/golang/expansion: $$ is
// $, $(NAME) of a known name is its value, anything else stays.
func kubeExpand(s string, vars map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			j := strings.IndexByte(s[i+2:], ')')
			if j < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+j]
			if v, ok := vars[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+j])
			}
			i += 2 + j
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

func TestFileKeys(t *testing.T) {
	t.Parallel()
	fs := []spec.File{
		{Path: "/etc/api/config.yaml"},
		{Path: "/etc/a_b/c"},
		{Path: "/etc/a/b_c"},
		{Path: "/srv/my file@1"},
		{Path: "/" + strings.Repeat("x", 300)},
	}
	keys := fileKeys(fs)
	if keys[0] != "etc_api_config.yaml" || keys[3] != "srv_my-file-1" {
		t.Errorf("keys = %q", keys)
	}
	if keys[1] == keys[2] || !strings.HasPrefix(keys[1], "etc_a_b_c-") {
		t.Errorf("colliding paths got %q and %q", keys[1], keys[2])
	}
	if len(keys[4]) > 253 {
		t.Errorf("long key: %d characters", len(keys[4]))
	}
	if again := fileKeys(fs); !cmp.Equal(keys, again) {
		t.Errorf("keys not stable: %q, %q", keys, again)
	}
}

func TestSecurityContextMerge(t *testing.T) {
	t.Parallel()
	r := &renderer{opts: Options{Platform: &spec.Platform{Defaults: &spec.Defaults{SecurityContext: &spec.SecurityContext{
		RunAsNonRoot: new(true), AllowPrivilegeEscalation: new(false),
		Capabilities: &spec.Capabilities{Drop: []string{"ALL"}}, SeccompProfile: "RuntimeDefault",
	}}}}}
	merged := r.securityContext("", &spec.SecurityContext{RunAsUser: new(int64(1000)), FSGroup: new(int64(2000)), Capabilities: &spec.Capabilities{Add: []string{"NET_BIND_SERVICE"}}})
	pod := podSecurity(merged)
	want := &corev1.PodSecurityContext{RunAsNonRoot: new(true), RunAsUser: new(int64(1000)), FSGroup: new(int64(2000)), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	if d := cmp.Diff(want, pod); d != "" {
		t.Errorf("pod (-want +got):\n%s", d)
	}
	ctr := containerSecurity(merged, pod)
	wantC := &corev1.SecurityContext{AllowPrivilegeEscalation: new(false), Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}, Drop: []corev1.Capability{"ALL"}}}
	if d := cmp.Diff(wantC, ctr); d != "" {
		t.Errorf("container (-want +got):\n%s", d)
	}
	// A sidecar running as another user and its own profile says so itself.
	side := containerSecurity(r.securityContext("", &spec.SecurityContext{RunAsUser: new(int64(101)), SeccompProfile: "Localhost/profiles/envoy.json"}), pod)
	if side.RunAsUser == nil || *side.RunAsUser != 101 || side.SeccompProfile == nil || *side.SeccompProfile.LocalhostProfile != "profiles/envoy.json" {
		t.Errorf("sidecar = %+v", side)
	}
	if got := (&renderer{opts: Options{Platform: &spec.Platform{}}}).securityContext("", nil); got != nil {
		t.Errorf("no defaults, no settings: %+v", got)
	}
}

func TestProbeNeedsOneHandler(t *testing.T) {
	t.Parallel()
	for _, p := range []*spec.Probe{
		{},
		{TCP: &spec.TCPProbe{Port: 1}, Exec: &spec.ExecProbe{Command: []string{"true"}}},
		{HTTP: &spec.HTTPProbe{Path: "/"}}, // no port to default to
	} {
		if _, err := probe(p, []spec.Port{{Name: "dns", Port: 53, Protocol: spec.ProtocolUDP}}); err == nil {
			t.Errorf("probe %+v accepted", p)
		}
	}
	ports := []spec.Port{{Name: "dns", Port: 53, Protocol: spec.ProtocolUDP}, {Name: "admin", Port: 9000, Expose: new(false)}, {Name: "web", Port: 8080}}
	got, err := probe(&spec.Probe{HTTP: &spec.HTTPProbe{Path: "/"}}, ports)
	if err != nil || got.HTTPGet.Port.IntValue() != 8080 {
		t.Errorf("default port: %+v, %v", got, err)
	}
	got, err = probe(&spec.Probe{HTTP: &spec.HTTPProbe{Path: "/"}}, ports[:2])
	if err != nil || got.HTTPGet.Port.IntValue() != 9000 {
		t.Errorf("default port without an exposed one: %+v, %v", got, err)
	}
}

// FuzzExpandable: no input panics, and a value without $$( reaches the
// container exactly as written when it names no earlier entry.
func FuzzExpandable(f *testing.F) {
	for _, s := range []string{"", "$", "$$", "$(A)", "$$(A)", "a$(b", "$$$(x)", "))$((", "pa$$word"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := expandable(s, map[string]bool{"A": true})
		if strings.Contains(s, "$$(") {
			return
		}
		if got := kubeExpand(expandable(s, nil), nil); got != s {
			t.Errorf("%q → %q → %q", s, expandable(s, nil), got)
		}
		_ = out
	})
}
