package cluster

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestTailFile(t *testing.T) {
	t.Parallel()
	var long strings.Builder
	for i := range 20000 { // more than maxTail bytes
		long.WriteString("line " + strconv.Itoa(i) + "\n")
	}
	tests := []struct {
		name, content string
		n             int
		want          string
	}{
		{"short", "a\nb\nc\n", 2, "b\nc"},
		{"fewer lines than asked", "a\nb", 5, "a\nb"},
		{"empty", "", 3, ""},
		{"longer than the read window", long.String(), 3, "line 19997\nline 19998\nline 19999"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "x.log")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if got := tailFile(path, tt.n); got != tt.want {
				t.Errorf("tailFile(%d) = %q, want %q", tt.n, got, tt.want)
			}
		})
	}
	if got := tailFile(filepath.Join(t.TempDir(), "missing"), 3); !strings.Contains(got, "cannot read log") {
		t.Errorf("tailFile(missing) = %q", got)
	}
}

func TestFreePorts(t *testing.T) {
	t.Parallel()
	ports, err := freePorts(17)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p <= 0 || seen[p] {
			t.Fatalf("freePorts = %v: want 17 distinct ports", ports)
		}
		seen[p] = true
		// Below the ephemeral range, where no outgoing connection takes them.
		if low := ephemeralLow(); low > minPort && (p < minPort || p >= low) {
			t.Errorf("port %d is outside [%d, %d)", p, minPort, low)
		}
	}
}
