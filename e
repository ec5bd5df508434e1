error: invalid value '1025' for '--sms <N>': at most 1024 SMs (one thread each)
