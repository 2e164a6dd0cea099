package exports

import "testing"

// BenchmarkResolveAndWire measures resolving every catalog variant and
// wiring all its exports, the work render does per addon reference.
func BenchmarkResolveAndWire(b *testing.B) {
	vs := variants()
	b.ReportAllocs()
	for b.Loop() {
		for _, v := range vs {
			exp, err := ForAddon(v.in)
			if err != nil {
				b.Fatal(err)
			}
			for k, e := range exp {
				_ = Wire(k, e)
			}
			_ = Checksum(exp)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(vs)), "ns/addon")
}
