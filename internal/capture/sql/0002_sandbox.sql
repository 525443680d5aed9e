-- The confinement a command ran in, as hostlink measured it when it
-- started ("workdir via namespaces+landlock", "off (...)").
ALTER TABLE captures ADD COLUMN sandbox TEXT;
