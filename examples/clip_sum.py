def clip_sum(xs, limit):
    total = 0
    for x in xs:
        if total + x > limit:
            return limit
        total += x
    return total
