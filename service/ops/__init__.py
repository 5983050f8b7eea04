"""Operations every floor shares: the settings, the logger, the metrics, and the one
background task a process runs beside its requests."""
