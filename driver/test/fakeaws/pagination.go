package fakeaws

import (
	"encoding/base64"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// Page tokens (NextToken, NextMarker) are opaque to clients: base64url of "v1|<scope>|<seq>", where scope names
// the listing (a file system ID, "*" for all) and seq is the creation sequence number of the last item returned.
// Listings are ordered by creation, so a page continues after that item even when items were created or deleted
// in between: nothing that existed for the whole listing is returned twice or skipped.

const tokenVersion = "v1"

// encodePageToken returns the token that continues the listing scope after seq.
func encodePageToken(scope string, seq uint64) string {
	raw := tokenVersion + "|" + scope + "|" + strconv.FormatUint(seq, 10)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// decodePageToken parses a token made by encodePageToken for the same scope. An empty token starts the
// listing (seq 0).
func decodePageToken(field, token, scope string) (uint64, *apiError) {
	if token == "" {
		return 0, nil
	}
	bad := func(why string) (uint64, *apiError) {
		return 0, errBadRequest("%s %q is not valid: %s; pass the value of the previous response unchanged",
			field, truncate(token, 140), why)
	}
	if len(token) > 128 {
		return bad("longer than 128 characters")
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(token)
	if err != nil {
		return bad("not a token issued by this service")
	}
	parts := strings.Split(string(raw), "|")
	if len(parts) != 3 || parts[0] != tokenVersion {
		return bad("not a token issued by this service")
	}
	if parts[1] != scope {
		return bad("it belongs to a different listing")
	}
	seq, err := strconv.ParseUint(parts[2], 10, 64)
	if err != nil || seq == 0 {
		return bad("not a token issued by this service")
	}
	return seq, nil
}

// parsePageSize parses MaxResults/MaxItems: empty gives def; otherwise an integer ≥ 1, capped at limit.
func parsePageSize(field, raw string, def, limit int) (int, *apiError) {
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 {
		return 0, errBadRequest("%s %q is not valid: want an integer >= 1", field, truncate(raw, 40))
	}
	if n > limit {
		n = limit
	}
	return n, nil
}

// sequenced is a record that listings return in creation order.
type sequenced interface{ sequence() uint64 }

func (r *fsRecord) sequence() uint64 { return r.seq }
func (r *mtRecord) sequence() uint64 { return r.seq }
func (r *apRecord) sequence() uint64 { return r.seq }

// listing names one Describe operation's paging parameters, which differ between EFS operations: the page size
// (MaxItems or MaxResults) with its default and limit, and the token (Marker or NextToken).
type listing struct {
	sizeField  string
	def, limit int
	tokenField string
}

// size parses the request's page size (parsePageSize).
func (l listing) size(q url.Values) (int, *apiError) {
	return parsePageSize(l.sizeField, q.Get(l.sizeField), l.def, l.limit)
}

// takePage returns the page of list (the records of listing scope, in creation order) that the request's token and
// size ask for, and the token of the page after it, "" after the last.
func takePage[T sequenced](q url.Values, l listing, size int, scope string, list []T) ([]T, string, *apiError) {
	after, e := decodePageToken(l.tokenField, q.Get(l.tokenField), scope)
	if e != nil {
		return nil, "", e
	}
	page, more := pageAfter(list, after, size)
	if !more {
		return page, "", nil
	}
	return page, encodePageToken(scope, page[len(page)-1].sequence()), nil
}

// pageAfter returns the items of list (ordered by seq) after seq, at most size of them, and whether more
// remain.
func pageAfter[T sequenced](list []T, after uint64, size int) ([]T, bool) {
	i := sort.Search(len(list), func(i int) bool { return list[i].sequence() > after })
	rest := list[i:]
	if len(rest) > size {
		return rest[:size], true
	}
	return rest, false
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
