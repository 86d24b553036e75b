// Package archtest holds the architecture test: the import rules between the broker's packages,
// checked with go list so that a forbidden edge fails the build's tests instead of a review.
package archtest
