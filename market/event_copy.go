package market

// CopyFrom makes e an independent copy of src, reusing e's level and change slices'
// storage: after it, e shares no slice with src, and copying events of a working
// size into the same e does not allocate. Neither event may be used concurrently.
func (e *Event) CopyFrom(src *Event) {
	bids, asks, changes := e.Bids[:0], e.Asks[:0], e.Changes[:0]
	*e = *src
	e.Bids = append(bids, src.Bids...)
	e.Asks = append(asks, src.Asks...)
	e.Changes = append(changes, src.Changes...)
}
