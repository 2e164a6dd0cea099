package exports

import "testing"

func TestPrimaryService(t *testing.T) {
	t.Parallel()
	long := "a-very-long-release-name-that-goes-on-and-on-and-on-for-ever-x"
	for _, tc := range []struct {
		name   string
		values map[string]any
		full   string
		want   string
	}{
		{"standalone", nil, "db", "db"},
		{"replication", map[string]any{"architecture": "replication"}, "db", "db-primary"},
		{"primary.name", map[string]any{"architecture": "replication", "primary": map[string]any{"name": "main"}}, "db", "db-main"},
		{"cut to 63", map[string]any{"architecture": "replication"}, long, trunc63(long + "-primary")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := primaryService(values{tc.values}, tc.full)
			if err != nil || got != tc.want {
				t.Errorf("primaryService = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := primaryService(values{map[string]any{"architecture": "{{ .Values.x }}"}}, "db"); err == nil {
		t.Error("a template in architecture: no error")
	}
}

func TestSecretName(t *testing.T) {
	t.Parallel()
	paths := []string{"global.auth.existingSecret", "auth.existingSecret"}
	for _, tc := range []struct {
		name                   string
		values                 map[string]any
		wantName, wantExisting string
	}{
		{"the chart's", nil, "db", ""},
		{"existing", map[string]any{"auth": map[string]any{"existingSecret": "mine"}}, "mine", "mine"},
		{"the first set", map[string]any{"global": map[string]any{"auth": map[string]any{"existingSecret": "global"}}, "auth": map[string]any{"existingSecret": "mine"}}, "global", "global"},
		{"empty is unset", map[string]any{"global": map[string]any{"auth": map[string]any{"existingSecret": ""}}, "auth": map[string]any{"existingSecret": "mine"}}, "mine", "mine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			name, existing, err := secretName(values{tc.values}, "db", paths...)
			if err != nil || name != tc.wantName || existing != tc.wantExisting {
				t.Errorf("secretName = %q, %q, %v; want %q, %q", name, existing, err, tc.wantName, tc.wantExisting)
			}
		})
	}
}
