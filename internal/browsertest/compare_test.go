package browsertest

import (
	"image"
	"image/color"
	"math/rand/v2"
	"testing"
)

// page draws a synthetic page: a white background, "text" (rows of dark strokes
// with grey antialiased edges) and a chart line in blue.
func page(w, h int, jitter func(x, y int) int, line bool) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := 255
			if y%40 >= 10 && y%40 < 21 && x%7 < 2 && x > 20 && x < w-20 { // glyph strokes
				v = 40
			} else if y%40 >= 10 && y%40 < 21 && x%7 == 2 && x > 20 && x < w-20 { // antialiased edge
				v = 160
			}
			v = min(255, max(0, v+jitter(x, y)))
			img.SetRGBA(x, y, color.RGBA{uint8(v), uint8(v), uint8(v), 255})
		}
	}
	if line {
		for x := 50; x < w-50; x++ {
			for dy := 0; dy < 2; dy++ {
				img.SetRGBA(x, h/2+dy+x/40, color.RGBA{0x1f, 0x77, 0xb4, 255})
			}
		}
	}
	return img
}

func none(int, int) int { return 0 }

func TestCompareImagesToleratesAntialiasingButNotAMissingLine(t *testing.T) {
	const w, h = 400, 320
	ref := Reduce(page(w, h, none, true), RefScale)
	tol := Tolerance{}

	// The same picture.
	c, err := CompareImages(page(w, h, none, true), ref, tol)
	if err != nil || !c.OK(tol) || c.Bad != 0 {
		t.Fatalf("identical: %v %v", c, err)
	}

	// Antialiasing noise: every edge pixel off by up to ±60 levels, every other
	// pixel by up to ±6, as another FreeType build would render the same glyphs.
	r := rand.New(rand.NewPCG(1, 2))
	noisy := page(w, h, func(x, y int) int {
		if x%7 == 2 || x%7 == 3 {
			return r.IntN(121) - 60
		}
		return r.IntN(13) - 6
	}, true)
	if c, _ := CompareImages(noisy, ref, tol); !c.OK(tol) {
		t.Fatalf("antialiasing noise failed the comparison: %v", c)
	}

	// A chart line that is not drawn.
	if c, _ := CompareImages(page(w, h, none, false), ref, tol); c.OK(tol) || c.Bad == 0 {
		t.Fatalf("a missing chart line passed: %v", c)
	}

	// A page 5% longer.
	if c, _ := CompareImages(page(w, h*105/100, none, true), ref, tol); c.OK(tol) {
		t.Fatalf("a page 5%% longer passed: %v", c)
	}

	// Another width is an error.
	if _, err := CompareImages(page(w+10, h, none, true), ref, tol); err == nil {
		t.Fatal("a wider screenshot was compared")
	}
}

func TestReduceAveragesSquares(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	img.SetRGBA(0, 0, color.RGBA{0, 0, 0, 255})
	img.SetRGBA(1, 0, color.RGBA{100, 100, 100, 255})
	img.SetRGBA(0, 1, color.RGBA{200, 200, 200, 255})
	img.SetRGBA(1, 1, color.RGBA{100, 100, 100, 255})
	img.SetRGBA(2, 0, color.RGBA{10, 20, 30, 255})
	img.SetRGBA(2, 1, color.RGBA{30, 40, 50, 255})
	out := Reduce(img, 2)
	if b := out.Bounds(); b.Dx() != 2 || b.Dy() != 1 {
		t.Fatalf("bounds %v", b)
	}
	if got := out.RGBAAt(0, 0); got != (color.RGBA{100, 100, 100, 255}) {
		t.Fatalf("first square %v", got)
	}
	if got := out.RGBAAt(1, 0); got != (color.RGBA{20, 30, 40, 255}) {
		t.Fatalf("partial square %v", got)
	}
}
