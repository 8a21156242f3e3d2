"""Where models come from: built-in names and user files (:mod:`.model_source`, :mod:`.userfiles`)."""
