-- The code a text message gives its request (issue 17): a reply names the request by it
-- ("1 K7QD"), so a bare "1" never decides a request the person did not mean. One code per
-- request, channel and person; a person's codes on a channel never repeat, so a late reply
-- to a closed request cannot decide a newer one.
CREATE TABLE reply_codes (
    channel TEXT NOT NULL,
    recipient TEXT NOT NULL,
    code TEXT NOT NULL,
    request_id TEXT NOT NULL REFERENCES requests (id) ON DELETE CASCADE,
    PRIMARY KEY (channel, recipient, code),
    UNIQUE (request_id, channel, recipient)
);
