-- The directory of the workdir a command ran in, so that a registry sees
-- only the commands run in its own workdirs (a platform session's folder
-- is not the configured workdirs): NULL for captures made before.
ALTER TABLE captures ADD COLUMN root TEXT;
