package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Saved runs: `pitboss backtest --save NAME` keeps a run's JSON report as
// DIR/NAME.json (the command's DIR: docs/backtests.md), for `pitboss backtest
// compare`.

var runName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ErrRunName is returned for a name outside the rule of ValidRunName.
var ErrRunName = errors.New("a run's name is 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit")

// ValidRunName checks a saved run's name: 1–64 of A–Z a–z 0–9 . _ -, starting
// with a letter or a digit (so it is one file name, never a path).
func ValidRunName(name string) error {
	if !runName.MatchString(name) || strings.HasSuffix(name, ".json") {
		return ErrRunName
	}
	return nil
}

// SaveRun writes r as DIR/NAME.json (created 0755, the file 0644, replaced
// atomically) and returns its path and whether it replaced a run of that name.
func SaveRun(dir, name string, r *Report) (path string, replaced bool, err error) {
	if err := ValidRunName(name); err != nil {
		return "", false, err
	}
	b, err := r.MarshalIndent()
	if err != nil {
		return "", false, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", false, err
	}
	path = filepath.Join(dir, name+".json")
	_, statErr := os.Stat(path)
	tmp, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return "", false, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return "", false, err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return "", false, err
	}
	if err := tmp.Close(); err != nil {
		return "", false, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", false, err
	}
	return path, statErr == nil, nil
}

// LoadRun reads a JSON report (a saved run, or any file `--out` wrote). A
// report of a later version than this build's is refused.
func LoadRun(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: not a backtest report: %v", path, err)
	}
	if r.Version < 1 || r.Version > Version {
		return nil, fmt.Errorf("%s: report version %d; this pitboss reads 1 to %d", path, r.Version, Version)
	}
	return &r, nil
}

// ListRuns returns the names of the runs saved in dir, sorted (none when dir
// does not exist).
func ListRuns(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".json"); ok && !e.IsDir() && ValidRunName(n) == nil {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}
