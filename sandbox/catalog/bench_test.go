package catalog

import "testing"

// BenchmarkParseDemo: parsing and validating the demo catalogue (16 markets, 14
// tags, one topic in six locales) — what `pitboss exchange --markets` pays once.
func BenchmarkParseDemo(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("demo.yaml", demoYAML); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLocalizeTopic: the World Cup topic in one locale with its report.
func BenchmarkLocalizeTopic(b *testing.B) {
	c := Demo()
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := c.LocalizeTopic("world-cup", "ko-KR"); !ok {
			b.Fatal("no topic")
		}
	}
}
