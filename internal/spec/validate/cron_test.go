package validate

import (
	"strings"
	"testing"
)

func TestCronProblem(t *testing.T) {
	t.Parallel()
	valid := []string{
		"0 3 * * *", "*/15 * * * *", "0 0 1 1 *", "0 9-17 * * MON-FRI", "0 0 * * sun", "5,35 1-3/2 ? JAN,jul 0",
		"59 23 31 12 6", "0 0 * * 0-6", "@daily", "@HOURLY", "@every 90m", " 0 3 * * * ", "0 12 */90 * *",
	}
	for _, s := range valid {
		if m := cronProblem(s); m != "" {
			t.Errorf("cronProblem(%q) = %q, want valid", s, m)
		}
	}
	invalid := map[string]string{
		"":                   "must not be empty",
		"0 3 * *":            "has 4 fields",
		"0 3 * * * *":        "has 6 fields",
		"60 * * * *":         "outside 0-59",
		"* 24 * * *":         "outside 0-23",
		"* * 0 * *":          "outside 1-31",
		"* * * 13 *":         "outside 1-12",
		"* * * * 7":          "outside 0-6",
		"* * * * MONDAY":     "neither a number",
		"*/0 * * * *":        `step "0"`,
		"*/x * * * *":        `step "x"`,
		"5-1 * * * *":        "starts after it ends",
		"1,,2 * * * *":       "empty list item",
		"? * * * *":          "only the day fields",
		"-1 * * * *":         "not a number",
		"+1 * * * *":         "not a number",
		"@fortnightly":       "is not a descriptor",
		"@daily 3":           "is not a descriptor",
		"@every soon":        "@every needs a duration",
		"@every 10ms":        "@every needs a duration",
		"TZ=UTC 0 3 * * *":   "use time_zone",
		"CRON_TZ=UTC @daily": "use time_zone",
	}
	for s, want := range invalid {
		if m := cronProblem(s); !strings.Contains(m, want) {
			t.Errorf("cronProblem(%q) = %q, want it to say %q", s, m, want)
		}
	}
}

// FuzzCronProblem checks that the schedule check never panics and that a
// schedule it accepts has the shape the controller parses: a descriptor,
// or five fields of digits, names and the operators , - / * ?.
func FuzzCronProblem(f *testing.F) {
	for _, s := range []string{"0 3 * * *", "@daily", "@every 1h", "*/5 1-3 ? JAN MON", "61 * * * *", "TZ=x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if cronProblem(s) != "" {
			return
		}
		t2 := strings.TrimSpace(s)
		if strings.HasPrefix(t2, "@") {
			return
		}
		fields := strings.Fields(t2)
		if len(fields) != 5 {
			t.Fatalf("accepted %q with %d fields", s, len(fields))
		}
		for _, fl := range fields {
			for _, c := range strings.ToLower(fl) {
				if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || strings.ContainsRune(",-/*?", c)) {
					t.Fatalf("accepted %q with %q in a field", s, c)
				}
			}
		}
	})
}

func TestEnvRefs(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]string{
		"$(A):$(B_C)":   "A B_C",
		"$$(A) $(B)":    "B",
		"$$$(A)":        "A",
		"$(A":           "",
		"x$y $ (A)":     "",
		"$(A)$(A)":      "A A",
		"$$$$(A)$(B)$$": "B",
	} {
		if got := strings.Join(envRefs(v), " "); got != want {
			t.Errorf("envRefs(%q) = %q, want %q", v, got, want)
		}
	}
}
