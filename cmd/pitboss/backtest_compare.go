package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/pitbossdev/pitboss/runtime/report"
)

const backtestCompareUsage = `[flags] RUN RUN...

Prints runs side by side: what each was given (data, period, latency, the
strategy's parameters, the fee, the guards) with the ones that differ marked,
and how each did (PnL, return, Sharpe, drawdown, trades, fills, Brier, denials,
kill-switch trips) with each run's difference from the first. --html renders
the same as a self-contained page with the runs' PnL and drawdown over time.

A RUN is a name saved with pitboss backtest --save NAME, or the path of a JSON
report (--out FILE, --save's files): anything with a / or ending in .json is a
path. With no RUN, lists the saved runs.

  pitboss backtest --data rec.tape --save wide agents/examples/quoter/agent.yaml
  pitboss backtest --data rec.tape --save tight agent-tight.yaml
  pitboss backtest compare --html compare.html wide tight`

func runBacktestCompare(args []string, io stdio) error {
	fs := newFlagSet("backtest compare", backtestCompareUsage, io)
	htmlOut := fs.String("html", "", "write the comparison as a self-contained HTML page to this file")
	runsDir := fs.String("runs-dir", "", "where saved runs are (default: $XDG_DATA_HOME/pitboss/backtests)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	dir, err := backtestRunsDir(*runsDir, io.getenv)
	if err != nil {
		return err
	}
	if fs.NArg() == 0 {
		names, err := report.ListRuns(dir)
		if err != nil {
			return err
		}
		if len(names) == 0 {
			fmt.Fprintf(io.stdout, "no saved runs in %s (save one with pitboss backtest --save NAME)\n", dir)
			return nil
		}
		fmt.Fprintf(io.stdout, "saved runs in %s:\n", dir)
		for _, n := range names {
			fmt.Fprintf(io.stdout, "  %s\n", n)
		}
		return nil
	}
	if fs.NArg() < 2 {
		return usagef("name at least two runs to compare")
	}
	var runs []report.Compared
	for _, arg := range fs.Args() {
		path, name := arg, strings.TrimSuffix(filepath.Base(arg), ".json")
		if !strings.ContainsRune(arg, '/') && !strings.HasSuffix(arg, ".json") {
			if err := report.ValidRunName(arg); err != nil {
				return usagef("%q: %v", arg, err)
			}
			path = filepath.Join(dir, arg+".json")
		}
		r, err := report.LoadRun(path)
		if errors.Is(err, os.ErrNotExist) && path != arg {
			return fmt.Errorf("no saved run %q in %s (pitboss backtest compare lists them)", arg, dir)
		}
		if err != nil {
			return err
		}
		runs = append(runs, report.Compared{Name: name, Report: r})
	}
	c, err := report.Compare(runs)
	if err != nil {
		return err
	}
	if *htmlOut != "" {
		if err := writeFileWith(*htmlOut, c.WriteHTML); err != nil {
			return err
		}
	}
	if err := c.WriteText(io.stdout); err != nil {
		return err
	}
	if *htmlOut != "" {
		fmt.Fprintf(io.stdout, "\nhtml comparison: %s\n", *htmlOut)
	}
	return nil
}

// backtestRunsDir is where saved runs live: flag, else $XDG_DATA_HOME (or
// ~/.local/share) /pitboss/backtests on Unix, the OS's application-data
// directory elsewhere.
func backtestRunsDir(flag string, getenv func(string) string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if runtime.GOOS != "windows" && runtime.GOOS != "darwin" {
		if x := getenv("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) {
			return filepath.Join(x, "pitboss", "backtests"), nil
		}
		home := getenv("HOME")
		if home == "" {
			return "", errors.New("$HOME is not set: give --runs-dir")
		}
		return filepath.Join(home, ".local", "share", "pitboss", "backtests"), nil
	}
	exch, err := defaultDataDir(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(exch), "backtests"), nil
}
