package store

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

var (
	// ErrNotFound is returned when an addressed row does not exist.
	ErrNotFound = errors.New("not found")
	// ErrUnavailable means PostgreSQL could not be reached (refused, timed out, connection lost): the
	// caller may spool or retry, nothing was applied.
	ErrUnavailable = errors.New("database unavailable")
	// ErrPool means no connection became free within the acquire timeout.
	ErrPool = errors.New("pool")
	// ErrReadOnly comes with ErrUnavailable when the only PostgreSQL reachable is a standby (read-only
	// transactions, or no read-write host among a multi-host URL's): a failover is under way, or the
	// URL names no primary.
	ErrReadOnly = errors.New("database read-only")
)

// PgError exposes the SQLSTATE of a server-side failure without leaking the driver type.
type PgError struct {
	Code    string
	Message string
	Detail  string
}

func (e *PgError) Error() string {
	if e.Detail != "" {
		return e.Message + " (" + e.Detail + ")"
	}
	return e.Message
}

// interpret is the one place where driver errors become this package's errors.
func interpret(err error) error {
	if err == nil {
		return nil
	}
	// Already interpreted (a helper interpreted it and its caller does again): wrapped a second time,
	// it read "database unavailable" twice in the logs.
	var pe *PgError
	if errors.Is(err, ErrUnavailable) || errors.Is(err, ErrNotFound) || errors.As(err, &pe) {
		return err
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if connectUnavailable(err) {
		return errors.Join(ErrUnavailable, err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Class 08 (connection exception) and 57P0x (server shutting down) mean the database went
		// away under us; everything else is a statement-level failure.
		if len(pgErr.Code) >= 2 && pgErr.Code[:2] == "08" || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03" {
			return errors.Join(ErrUnavailable, err)
		}
		// 25006 read_only_sql_transaction: this session reached a standby (or a primary being demoted);
		// nothing was written, and a retry after the failover succeeds.
		if pgErr.Code == "25006" {
			return errors.Join(ErrUnavailable, ErrReadOnly, err)
		}
		return &PgError{Code: pgErr.Code, Message: pgErr.Message, Detail: pgErr.Detail}
	}
	if errors.Is(err, ErrReadOnly) { // from readWriteOnly: no host among the URL's takes writes
		return errors.Join(ErrUnavailable, err)
	}
	var ne net.Error
	// A connection that broke mid-statement (server stopped, socket reset) surfaces as EOF or a
	// syscall error rather than a PgError: the statement may or may not have committed.
	if pgconn.SafeToRetry(err) || pgconn.Timeout(err) || errors.As(err, &ne) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, pgconn.ErrConnClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) {
		return errors.Join(ErrUnavailable, err)
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return errors.Join(ErrUnavailable, err)
	}
	return err
}
