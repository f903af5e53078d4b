package browsertest

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// UpdateEnv is the environment variable that, set to "1", makes CheckReference
// write the reference image instead of comparing (the switch of the golden files).
const UpdateEnv = "PITBOSS_UPDATE_GOLDEN"

// ScreenshotDirEnv names a directory where CheckReference keeps every screenshot
// it compares, and the difference picture of a failed comparison, for people to
// look at. Unset: a failed comparison keeps them in $TMPDIR/pitboss-screenshots.
const ScreenshotDirEnv = "PITBOSS_SCREENSHOT_DIR"

// RefScale is the factor by which references are reduced (see Reduce): a
// sixteenth of the pixels — the bytes a repository can carry for several full
// pages — and still the mean colour of every 4 × 4 square, finer than the
// comparison's squares.
const RefScale = 4

// Tolerance says how different a screenshot may be from its reference.
//
// The comparison is perceptual rather than pixel for pixel: both pictures are
// reduced to the mean colour of each Block × Block square (in the pixels of the
// screenshot), so antialiasing, subpixel positioning and hinting — which differ
// between machines, Chromium versions and FreeType builds even with the same
// font — move a square's mean by a few levels, while a missing line, a marker of
// another colour or a shifted chart moves it by tens. A square differs when one of
// its channel means differs by more than Level (of 255); the pictures match when at
// most MaxBad of the squares differ and their heights are within MaxHeight.
type Tolerance struct {
	Block     int     // side of a square in screenshot pixels (a multiple of RefScale); default 8
	Level     float64 // per-channel mean difference allowed in a square; default 24
	MaxBad    float64 // fraction of squares allowed to differ; default 0.002
	MaxHeight float64 // relative difference of heights allowed; default 0.01
}

func (t Tolerance) withDefaults() Tolerance {
	if t.Block <= 0 {
		t.Block = 8
	}
	if r := t.Block % RefScale; r != 0 {
		t.Block += RefScale - r
	}
	if t.Level <= 0 {
		t.Level = 24
	}
	if t.MaxBad <= 0 {
		t.MaxBad = 0.002
	}
	if t.MaxHeight <= 0 {
		t.MaxHeight = 0.01
	}
	return t
}

// Reduce returns img scaled down by a whole factor (each output pixel the mean of
// a factor × factor square; partial squares at the edges are averaged over what
// they hold), opaque RGB. References are kept reduced by RefScale: nothing the
// comparison needs is lost.
func Reduce(img image.Image, factor int) *image.RGBA {
	src := toRGBA(img)
	b := src.Bounds()
	w, h := (b.Dx()+factor-1)/factor, (b.Dy()+factor-1)/factor
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var r, g, bl, n int
			for dy := 0; dy < factor && y*factor+dy < b.Dy(); dy++ {
				row := src.PixOffset(b.Min.X+x*factor, b.Min.Y+y*factor+dy)
				for dx := 0; dx < factor && x*factor+dx < b.Dx(); dx++ {
					p := src.Pix[row+4*dx : row+4*dx+3 : row+4*dx+3]
					r, g, bl, n = r+int(p[0]), g+int(p[1]), bl+int(p[2]), n+1
				}
			}
			o := out.PixOffset(x, y)
			out.Pix[o], out.Pix[o+1], out.Pix[o+2], out.Pix[o+3] = uint8((r+n/2)/n), uint8((g+n/2)/n), uint8((bl+n/2)/n), 255
		}
	}
	return out
}

// toRGBA returns img as opaque-composited RGBA (a copy unless it is one already).
func toRGBA(img image.Image) *image.RGBA {
	if r, ok := img.(*image.RGBA); ok {
		return r
	}
	b := img.Bounds()
	out := image.NewRGBA(b)
	draw.Draw(out, b, img, b.Min, draw.Src)
	return out
}

// Comparison is the result of CompareImages.
type Comparison struct {
	Squares, Bad int     // squares compared, squares that differ
	Worst        float64 // the largest channel-mean difference of a square
	GotH, WantH  int     // heights, in screenshot pixels
	// Diff shows the reference (faded) with the squares that differ in red.
	Diff *image.RGBA
}

// OK reports whether the comparison is within tol.
func (c Comparison) OK(tol Tolerance) bool {
	tol = tol.withDefaults()
	if c.WantH == 0 || math.Abs(float64(c.GotH-c.WantH))/float64(c.WantH) > tol.MaxHeight {
		return false
	}
	return float64(c.Bad) <= tol.MaxBad*float64(c.Squares)
}

func (c Comparison) String() string {
	return fmt.Sprintf("%d of %d squares differ (%.2f%%), worst by %.0f levels; height %d px, reference %d px",
		c.Bad, c.Squares, 100*float64(c.Bad)/float64(max(c.Squares, 1)), c.Worst, c.GotH, c.WantH)
}

// CompareImages compares a screenshot with a reference kept reduced by RefScale
// (see Reduce). Widths must be equal; where heights differ, the squares of the
// longer one's extra rows count as different.
func CompareImages(got image.Image, wantImg image.Image, tol Tolerance) (Comparison, error) {
	tol = tol.withDefaults()
	g := Reduce(got, RefScale)
	want := toRGBA(wantImg)
	wb := want.Bounds()
	if g.Bounds().Dx() != wb.Dx() {
		return Comparison{}, fmt.Errorf("screenshot %d px wide, reference %d px (reduced by %d: %d)", got.Bounds().Dx(),
			RefScale*wb.Dx(), RefScale, wb.Dx())
	}
	s := tol.Block / RefScale // square side in reduced pixels
	cols := (wb.Dx() + s - 1) / s
	rowsG, rowsW := (g.Bounds().Dy()+s-1)/s, (wb.Dy()+s-1)/s
	rows := max(rowsG, rowsW)
	c := Comparison{Squares: cols * rows, GotH: got.Bounds().Dy(), WantH: RefScale * wb.Dy()}
	c.Diff = image.NewRGBA(image.Rect(0, 0, wb.Dx(), max(wb.Dy(), g.Bounds().Dy())))
	for y := 0; y < c.Diff.Bounds().Dy(); y++ {
		for x := 0; x < wb.Dx(); x++ {
			v := uint8(255)
			if y < wb.Dy() {
				p := want.RGBAAt(wb.Min.X+x, wb.Min.Y+y)
				v = uint8(191 + (0.299*float64(p.R)+0.587*float64(p.G)+0.114*float64(p.B))/4)
			}
			c.Diff.SetRGBA(x, y, color.RGBA{v, v, v, 255})
		}
	}
	for row := 0; row < rows; row++ {
		for col := 0; col < cols; col++ {
			r := image.Rect(col*s, row*s, min((col+1)*s, wb.Dx()), (row+1)*s)
			gm, gok := mean(g, r)
			wm, wok := mean(want, r.Add(wb.Min))
			d := 255.0
			if gok && wok {
				d = max(math.Abs(gm[0]-wm[0]), math.Abs(gm[1]-wm[1]), math.Abs(gm[2]-wm[2]))
			}
			c.Worst = max(c.Worst, d)
			if d > tol.Level {
				c.Bad++
				for y := r.Min.Y; y < min(r.Max.Y, c.Diff.Bounds().Dy()); y++ {
					for x := r.Min.X; x < r.Max.X; x++ {
						c.Diff.SetRGBA(x, y, color.RGBA{230, 30, 30, 255})
					}
				}
			}
		}
	}
	return c, nil
}

// mean is the mean colour of img over r ∩ its bounds; false when empty.
func mean(img *image.RGBA, r image.Rectangle) ([3]float64, bool) {
	r = r.Intersect(img.Bounds())
	if r.Empty() {
		return [3]float64{}, false
	}
	var s [3]int
	for y := r.Min.Y; y < r.Max.Y; y++ {
		o := img.PixOffset(r.Min.X, y)
		for x := 0; x < r.Dx(); x++ {
			s[0] += int(img.Pix[o+4*x])
			s[1] += int(img.Pix[o+4*x+1])
			s[2] += int(img.Pix[o+4*x+2])
		}
	}
	n := float64(r.Dx() * r.Dy())
	return [3]float64{float64(s[0]) / n, float64(s[1]) / n, float64(s[2]) / n}, true
}

// CheckReference compares a screenshot with the reference image at path (a PNG
// reduced by RefScale, see Reduce) within tol, failing the test when it differs — and
// keeping the screenshot and a picture of the differences for people to look at.
// With PITBOSS_UPDATE_GOLDEN=1 it writes the reference instead. With
// PITBOSS_SCREENSHOT_DIR set, every screenshot is kept there too, named after the
// reference.
func CheckReference(t testing.TB, path string, got image.Image, tol Tolerance) {
	t.Helper()
	name := strings.TrimSuffix(filepath.Base(path), ".png")
	if dir := os.Getenv(ScreenshotDirEnv); dir != "" {
		writePNG(t, filepath.Join(dir, name+".png"), got)
	}
	if os.Getenv(UpdateEnv) == "1" {
		writePNG(t, path, Reduce(got, RefScale))
		return
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (run with %s=1 to create it)", err, UpdateEnv)
	}
	want, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	c, err := CompareImages(got, want, tol)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	t.Logf("%s: %s", path, c)
	if c.OK(tol) {
		return
	}
	dir := os.Getenv(ScreenshotDirEnv)
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "pitboss-screenshots")
	}
	writePNG(t, filepath.Join(dir, name+".png"), got)
	writePNG(t, filepath.Join(dir, name+".diff.png"), c.Diff)
	t.Errorf("%s: the screenshot differs from the reference: %s. Kept %s and %s (the differences in red); "+
		"after an intended change, rewrite the reference with %s=1 and look at it",
		path, c, filepath.Join(dir, name+".png"), filepath.Join(dir, name+".diff.png"), UpdateEnv)
}

func writePNG(t testing.TB, path string, img image.Image) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(f, img); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
