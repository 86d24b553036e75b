package httpapi

import (
	"encoding/json"
	"net/http"
	"time"
)

func (s *Server) handleGroups(w http.ResponseWriter, r *http.Request) error {
	res, err := s.eng.ConsumerGroups(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) handleLagging(w http.ResponseWriter, r *http.Request) error {
	secs, err := queryInt(r, "minLagSeconds", 3600, 0)
	if err != nil {
		return err
	}
	res, err := s.eng.LaggingPartitions(r.Context(), time.Duration(secs)*time.Second)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) handleGroup(w http.ResponseWriter, r *http.Request) error {
	res, err := s.eng.ConsumerGroup(r.Context(), r.PathValue("group"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) handleGroupDelete(w http.ResponseWriter, r *http.Request) error {
	meta, err := queryBool(r, "deleteMetadata")
	if err != nil {
		return err
	}
	res, err := s.eng.DeleteConsumerGroup(r.Context(), r.PathValue("group"), r.PathValue("queue"), meta)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) handleSubscription(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		SubscriptionTimestamp json.RawMessage `json:"subscriptionTimestamp"`
	}
	if err := decodeBody(w, r, s.opt.MaxBodyBytes, &body); err != nil {
		return err
	}
	v, ok := optString(body.SubscriptionTimestamp)
	if !ok || v == "" {
		return badRequest("Missing subscriptionTimestamp in request body")
	}
	ts, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return badRequest("subscriptionTimestamp must be an ISO-8601 timestamp")
	}
	res, err := s.eng.UpdateSubscription(r.Context(), r.PathValue("group"), ts)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) handleSeek(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		ToEnd     *bool           `json:"toEnd"`
		Timestamp json.RawMessage `json:"timestamp"`
	}
	if err := decodeBody(w, r, s.opt.MaxBodyBytes, &body); err != nil {
		return err
	}
	toEnd := body.ToEnd != nil && *body.ToEnd
	v, ok := optString(body.Timestamp)
	if !ok {
		return badRequest("timestamp must be an ISO-8601 string")
	}
	var ts time.Time
	switch {
	case toEnd:
	case v == "start" || v == "beginning":
		ts = time.Unix(0, 0).UTC()
	case v != "":
		var err error
		if ts, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return badRequest("timestamp must be an ISO-8601 string")
		}
	default:
		return badRequest("Must specify either 'toEnd': true or 'timestamp'")
	}
	res, err := s.eng.SeekQueue(r.Context(), r.PathValue("group"), r.PathValue("queue"), toEnd, ts)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) handleSeekPartition(w http.ResponseWriter, r *http.Request) error {
	res, err := s.eng.SeekPartition(r.Context(), r.PathValue("group"), r.PathValue("queue"), r.PathValue("partition"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
