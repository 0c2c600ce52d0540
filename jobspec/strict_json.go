package jobspec

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// CheckJSON refuses JSON that could mean two things or that a recursive
// decoder should never see, before it is decoded: text that is not valid
// UTF-8 (encoding/json would silently replace it), a string escape of half
// a UTF-16 surrogate pair (likewise), a key that appears twice in one
// object (encoding/json keeps the last), and nesting deeper than
// MaxNestingDepth. Syntax errors and trailing data are left to the
// decoder (json.Unmarshal refuses both). It is one pass over src with no
// recursion. Errors are *ParseError with the line and column.
func CheckJSON(src []byte) error {
	if !utf8.Valid(src) {
		at := invalidUTF8At(src)
		line, col := lineCol(src, at)
		return &ParseError{Line: line, Column: col, Detail: "invalid JSON: the text is not valid UTF-8"}
	}
	var stack []jsonFrame
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '{', '[':
			if len(stack) >= MaxNestingDepth {
				return jsonErrAt(src, i, fmt.Sprintf("JSON nested deeper than %d levels is over troupe's limit", MaxNestingDepth))
			}
			free := false
			if n := len(stack); n > 0 {
				free = stack[n-1].freeform || (stack[n-1].object && mapFields[strings.ToLower(stack[n-1].last)])
			}
			stack = append(stack, jsonFrame{object: src[i] == '{', expectKey: src[i] == '{', freeform: free})
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ',':
			if len(stack) > 0 && stack[len(stack)-1].object {
				stack[len(stack)-1].expectKey = true
			}
		case '"':
			end, err := scanString(src, i)
			if err != nil {
				return err
			}
			if end >= len(src) {
				return nil // unterminated: the decoder reports it
			}
			if n := len(stack); n > 0 && stack[n-1].expectKey {
				if err := stack[n-1].addKey(src, i, end); err != nil {
					return err
				}
			}
			i = end
		}
	}
	return nil
}

// mapFields are the fields, in troupe's and Nomad's request shapes, whose
// objects are maps with keys of their own (meta, env, a task's free-form
// config and everything in it, volume parameters...): their keys may
// differ in case only. Every other object is a struct, whose fields
// encoding/json matches without regard to case, so "ID" and "id" in one
// are the same key given twice.
var mapFields = map[string]bool{
	"meta": true, "env": true, "config": true, "volumes": true, "segments": true,
	"parameters": true, "secrets": true, "context": true, "attributes": true,
	"links": true, "target": true, "nodemeta": true,
}

// jsonFrame is an open object or array.
type jsonFrame struct {
	object    bool
	expectKey bool
	freeform  bool                // a map, or inside a task's config
	last      string              // the key whose value is being read
	n         int                 // keys seen
	first     string              // the first key, as compared
	keys      map[string]struct{} // every key as compared, once there are two
}

func (f *jsonFrame) addKey(src []byte, start, end int) error {
	f.expectKey = false
	var key string
	if err := json.Unmarshal(src[start:end+1], &key); err != nil {
		return nil // malformed: the decoder reports it with its position
	}
	f.last = key
	cmp := key
	if !f.freeform {
		cmp = strings.ToLower(key)
	}
	if f.n++; f.n == 1 {
		f.first = cmp
		return nil
	}
	if f.keys == nil {
		f.keys = map[string]struct{}{f.first: {}}
	}
	if _, dup := f.keys[cmp]; dup {
		return jsonErrAt(src, start, fmt.Sprintf("invalid JSON: key %q appears twice in one object (field names are matched without regard to case)", key))
	}
	f.keys[cmp] = struct{}{}
	return nil
}

// scanString returns the index of the quote that closes the string opened
// at src[start], refusing an escaped lone surrogate: a high one must be
// followed at once by an escaped low one, and a low one must not stand
// alone (both are read forwards, so "\\ud800" is text, not an escape).
// An unterminated string ends at the end of src (the decoder reports it).
func scanString(src []byte, start int) (int, error) {
	for i := start + 1; i < len(src); i++ {
		switch src[i] {
		case '"':
			return i, nil
		case '\\':
			if i+1 >= len(src) || src[i+1] != 'u' {
				i++ // a one-character escape
				continue
			}
			r, ok := hex4(src, i+2)
			switch {
			case !ok:
				i++ // malformed: the decoder reports it
			case r < 0xd800 || r > 0xdfff:
				i += 5
			case r <= 0xdbff && i+11 < len(src) && src[i+6] == '\\' && src[i+7] == 'u' && isLowSurrogate(src, i+8):
				i += 11 // the pair
			default:
				return 0, jsonErrAt(src, i, "invalid JSON: a \\u escape of half a surrogate pair is not a character")
			}
		}
	}
	return len(src), nil
}

func isLowSurrogate(src []byte, at int) bool {
	r, ok := hex4(src, at)
	return ok && r >= 0xdc00 && r <= 0xdfff
}

func hex4(src []byte, at int) (rune, bool) {
	if at+4 > len(src) {
		return 0, false
	}
	var r rune
	for _, c := range src[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

func invalidUTF8At(src []byte) int {
	for i := 0; i < len(src); {
		r, size := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(src)
}

func jsonErrAt(src []byte, at int, detail string) *ParseError {
	line, col := lineCol(src, at)
	return &ParseError{Line: line, Column: col, Detail: detail}
}
