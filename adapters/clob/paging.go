package clob

import (
	"bytes"
	"context"
	"iter"

	"github.com/pitbossdev/pitboss/api"
)

// cursorSeq iterates over every item of a cursor-paged endpoint (dialect §4.3):
// the first request carries no cursor, each later one the previous page's
// next_cursor, until a page returns api.EndCursor (or no cursor). A cursor seen
// before ends the iteration with ErrPagingLoop. An error ends it after yielding
// (zero, err). The iteration stops early when the consumer stops.
func cursorSeq[T any](ctx context.Context, cursor string, fetch func(ctx context.Context, cursor string) (*api.Page[T], error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		seen := map[string]bool{}
		for {
			p, err := fetch(ctx, cursor)
			if err != nil {
				yield(zero, err)
				return
			}
			for _, v := range p.Data {
				if !yield(v, nil) {
					return
				}
			}
			next := p.NextCursor
			if next == "" || next == api.EndCursor {
				return
			}
			if seen[next] || next == cursor {
				yield(zero, ErrPagingLoop)
				return
			}
			seen[next] = true
			cursor = next
		}
	}
}

// offsetSeq iterates over every item of an offset-paged endpoint: pages of limit
// items from offset on, until a page holds fewer than limit items. A page whose
// body equals the previous page's (a service ignoring offset) ends the iteration
// with ErrPagingLoop.
func offsetSeq[T any](ctx context.Context, offset, limit int, fetch func(ctx context.Context, offset, limit int) ([]T, []byte, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		var prev []byte
		for {
			items, raw, err := fetch(ctx, offset, limit)
			if err != nil {
				yield(zero, err)
				return
			}
			if len(items) > 0 && prev != nil && bytes.Equal(raw, prev) {
				yield(zero, ErrPagingLoop)
				return
			}
			prev = raw
			for _, v := range items {
				if !yield(v, nil) {
					return
				}
			}
			if len(items) < limit || len(items) == 0 {
				return
			}
			offset += len(items)
		}
	}
}

// pageLimit returns limit when it is in (0, max], else def.
func pageLimit(limit, def, max int) int {
	if limit <= 0 {
		return def
	}
	return min(limit, max)
}
