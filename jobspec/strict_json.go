package jobspec

import (
	"encoding/json"
	"fmt"
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
			stack = append(stack, jsonFrame{object: src[i] == '{', expectKey: src[i] == '{'})
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

// jsonFrame is an open object or array.
type jsonFrame struct {
	object    bool
	expectKey bool
	n         int                 // keys seen
	first     string              // the first key
	keys      map[string]struct{} // every key, once there are two
}

func (f *jsonFrame) addKey(src []byte, start, end int) error {
	f.expectKey = false
	var key string
	if err := json.Unmarshal(src[start:end+1], &key); err != nil {
		return nil // malformed: the decoder reports it with its position
	}
	if f.n++; f.n == 1 {
		f.first = key
		return nil
	}
	if f.keys == nil {
		f.keys = map[string]struct{}{f.first: {}}
	}
	if _, dup := f.keys[key]; dup {
		return jsonErrAt(src, start, fmt.Sprintf("invalid JSON: key %q appears twice in one object", key))
	}
	f.keys[key] = struct{}{}
	return nil
}

// scanString returns the index of the quote that closes the string opened
// at src[start], refusing an escaped lone surrogate. An unterminated
// string ends at the end of src (the decoder reports it).
func scanString(src []byte, start int) (int, error) {
	for i := start + 1; i < len(src); i++ {
		switch src[i] {
		case '"':
			return i, nil
		case '\\':
			if i+1 < len(src) && src[i+1] == 'u' {
				if err := checkSurrogate(src, i); err != nil {
					return 0, err
				}
			}
			i++
		}
	}
	return len(src), nil
}

// checkSurrogate checks the \uXXXX escape at src[i]: a high surrogate
// must be followed by an escaped low one, and a low one must not stand
// alone.
func checkSurrogate(src []byte, i int) error {
	r, ok := hex4(src, i+2)
	if !ok || r < 0xd800 || r > 0xdfff {
		return nil
	}
	if r <= 0xdbff && i+11 < len(src) && src[i+6] == '\\' && src[i+7] == 'u' {
		if lo, ok := hex4(src, i+8); ok && lo >= 0xdc00 && lo <= 0xdfff {
			return nil
		}
	}
	if r >= 0xdc00 && i >= 6 && src[i-6] == '\\' && src[i-5] == 'u' {
		if hi, ok := hex4(src, i-4); ok && hi >= 0xd800 && hi <= 0xdbff {
			return nil
		}
	}
	return jsonErrAt(src, i, "invalid JSON: a \\u escape of half a surrogate pair is not a character")
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
