// Package suggest finds the plausible intended word for a typo, for the
// "did you mean …?" hints of every parser of user input (expressions, agent,
// strategy, fleet and alert files). It uses the standard library only.
package suggest

import "strings"

// Closest returns the candidate closest to word, or "" when none is close enough to be
// a plausible typo: a case-insensitive match, or an edit distance of at most 1 for
// words of up to 4 letters, 2 up to 8 and 3 beyond. Ties go to the candidate that
// sorts first, so the answer is deterministic.
func Closest(word string, candidates []string) string {
	best, bestD := "", 1<<30
	limit := 1
	switch {
	case len(word) > 8:
		limit = 3
	case len(word) > 4:
		limit = 2
	}
	lw := strings.ToLower(word)
	for _, c := range candidates {
		if c == word || c == "" {
			continue
		}
		d := distance(lw, strings.ToLower(c))
		if d == 0 {
			d = 0 // case-only difference: the best possible
		}
		if d < bestD || d == bestD && c < best {
			best, bestD = c, d
		}
	}
	if bestD > limit {
		return ""
	}
	return best
}

// distance is the Levenshtein distance with adjacent transpositions counted as one
// edit (optimal string alignment).
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) == 0 {
		return len(rb)
	}
	if len(rb) == 0 {
		return len(ra)
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
