package report

import (
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/internal/browsertest"
	"github.com/pitbossdev/pitboss/market"
)

// wavyRun is a longer run whose equity curve and position have visible shape.
func wavyRun(t testing.TB) *Report {
	s := newScript(t, Config{From: t0, To: t0 + 600_000}, "1000")
	prices := []string{"0.40", "0.44", "0.47", "0.43", "0.38", "0.36", "0.41", "0.49", "0.55", "0.52", "0.46", "0.50"}
	for i := int64(0); i < 600; i++ {
		p := dec(prices[(i/50)%int64(len(prices))]) + market.Micros(i%7)*1000
		bid, ask := p-10_000, p+10_000
		s.book(i*1000, bid.String(), ask.String())
		switch i % 100 {
		case 10:
			s.fill(i*1000+1, market.Buy, market.Maker, bid.String(), "200", "0")
		case 60:
			s.fill(i*1000+1, market.Sell, market.Taker, bid.String(), "150", "0.2")
		}
	}
	r := s.c.Finish(&s.st, Run{Agent: "wavy", Strategy: "test", Data: "script", Events: 600})
	r.Title = "browser test"
	return r
}

// TestHTMLReportRendersInHeadlessChromium opens the report in headless Chromium,
// saves a screenshot and checks that it shows the equity curve: the page is not
// blank (pixel variance) and the curve's colour is drawn. The screenshot is kept in
// PITBOSS_SCREENSHOT_DIR when that is set.
func TestHTMLReportRendersInHeadlessChromium(t *testing.T) {
	bin := browsertest.Chromium(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := wavyRun(t).WriteHTML(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "report.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=1280,1100", "--screenshot="+shot, "file://"+page)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	pf, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	img, err := png.Decode(pf)
	pf.Close()
	if err != nil {
		t.Fatal(err)
	}
	if keep := os.Getenv("PITBOSS_SCREENSHOT_DIR"); keep != "" {
		data, _ := os.ReadFile(shot)
		if err := os.WriteFile(filepath.Join(keep, "backtest-report.png"), data, 0o644); err != nil {
			t.Errorf("keeping the screenshot: %v", err)
		}
	}
	b := img.Bounds()
	if b.Dx() < 800 || b.Dy() < 600 {
		t.Fatalf("screenshot of %v", b)
	}
	variance, curve := inspect(img)
	t.Logf("screenshot %v: luminance variance %.0f, %d pixels of the equity colour", b, variance, curve)
	if variance < 200 {
		t.Errorf("the screenshot looks blank (luminance variance %.0f)", variance)
	}
	if curve < 300 {
		t.Errorf("the equity curve is not visible (%d pixels of its colour)", curve)
	}
}

// inspect returns the variance of the luminance of img and the number of pixels
// close to the equity curve's colour (#1f77b4).
func inspect(img image.Image) (float64, int) {
	b := img.Bounds()
	var n, curve int
	var sum, sq float64
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r8, g8, b8 := int(r>>8), int(g>>8), int(bl>>8)
			l := 0.299*float64(r8) + 0.587*float64(g8) + 0.114*float64(b8)
			sum += l
			sq += l * l
			n++
			if abs(r8-0x1f) < 40 && abs(g8-0x77) < 40 && abs(b8-0xb4) < 40 {
				curve++
			}
		}
	}
	mean := sum / float64(n)
	return sq/float64(n) - mean*mean, curve
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
