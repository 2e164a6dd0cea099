package review

import (
	"testing"

	"github.com/fleetwright/fleetwright/internal/golden"
)

// BenchmarkScanVsParse compares the scan of an unchanged app file with its
// parse: the scan is what a review pays for each app a change leaves alone.
func BenchmarkScanVsParse(b *testing.B) {
	files := golden.ReadFiles(b, "../generate/testdata/fleets/artifacts")
	data := []byte(files["apps/prod/shop/_flux/orders.yaml"])
	if len(data) == 0 {
		b.Fatal("the golden fleet has no Flux file of app shop/orders")
	}
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			scanFluxFile("x", data)
		}
	})
	b.Run("parse", func(b *testing.B) {
		for b.Loop() {
			parseFluxFile("x", data)
		}
	})
}
