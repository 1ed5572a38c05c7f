-- Price overrides of media and rerank models (PUT /api/pricing): their unit rates as one JSON object
-- (imageInput, imageOutput, audioInput, audioOutput, perImage, perAudioMinute, minAudioSeconds,
-- perMillionCharacters, perSearchUnit; usage/pricing.ts). Null: token rates only.
ALTER TABLE pricing_overrides ADD COLUMN units TEXT;
