package scale

import (
	"os"
	"testing"
)

func TestParsePeakRSS(t *testing.T) {
	t.Parallel()
	const status = "Name:\tkustomize-contr\nVmPeak:\t 2000000 kB\nVmSize:\t 1900000 kB\nVmHWM:\t  412345 kB\nVmRSS:\t  300000 kB\n"
	got, err := parsePeakRSS(status)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(412345) << 10; got != want {
		t.Errorf("got %d bytes, want %d", got, want)
	}
	for _, bad := range []string{"Name:\tx\nVmRSS:\t1 kB\n", "VmHWM:\t12 MB\n", "VmHWM:\tlots kB\n"} {
		if _, err := parsePeakRSS(bad); err == nil {
			t.Errorf("parsePeakRSS(%q) gave no error", bad)
		}
	}
	// This process has some memory resident.
	if own, err := peakRSS(os.Getpid()); err != nil || own <= 0 {
		t.Errorf("peakRSS of this process = %d, %v", own, err)
	}
}
