-- POST /api/v1/configure stores a queue named "" as the original does (its clients configure one);
-- only names over 255 bytes are refused. Pushes and pops still need a name.
ALTER TABLE queues DROP CONSTRAINT queues_name_check;
ALTER TABLE queues ADD CONSTRAINT queues_name_check CHECK (length(name) <= 255);
