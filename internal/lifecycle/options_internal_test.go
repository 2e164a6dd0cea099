package lifecycle

import (
	"testing"
	"time"
)

// TestNow: the clock of commits is Now, else SOURCE_DATE_EPOCH, else the
// default (nil).
func TestNow(t *testing.T) {
	t.Parallel()
	fixed := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	epoch := func(v string) func(string) string {
		return func(k string) string {
			if k == "SOURCE_DATE_EPOCH" {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name string
		o    Options
		want time.Time // zero: no clock
	}{
		{"Now first", Options{Now: func() time.Time { return fixed }, Getenv: epoch("1")}, fixed},
		{"SOURCE_DATE_EPOCH", Options{Getenv: epoch("1740834000")}, time.Unix(1740834000, 0).UTC()},
		{"not a number", Options{Getenv: epoch("yesterday")}, time.Time{}},
		{"empty", Options{Getenv: epoch("")}, time.Time{}},
		{"no environment", Options{}, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			now := tc.o.now()
			switch {
			case tc.want.IsZero() && now != nil:
				t.Errorf("a clock at %v, want none", now())
			case !tc.want.IsZero() && now == nil:
				t.Errorf("no clock, want %v", tc.want)
			case now != nil && !now().Equal(tc.want):
				t.Errorf("clock at %v, want %v", now(), tc.want)
			}
		})
	}
}
