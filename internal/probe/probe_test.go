package probe

import "testing"

func TestCheckSpecRevision(t *testing.T) {
	t.Parallel()
	comps := func(revs ...string) Check {
		c := Check{Name: CheckSync}
		for _, r := range revs {
			c.Components = append(c.Components, ComponentStatus{Kind: "Kustomization", SpecRevision: r})
		}
		return c
	}
	tests := []struct {
		name string
		c    Check
		want string
	}{
		{"no components", comps(), ""},
		{"none known", comps("", ""), ""},
		{"one known", comps("", "abc"), "abc"},
		{"all agree", comps("abc", "abc"), "abc"},
		{"two differ", comps("abc", "", "def"), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.c.SpecRevision(); got != tc.want {
				t.Errorf("SpecRevision() = %q, want %q", got, tc.want)
			}
		})
	}
}
