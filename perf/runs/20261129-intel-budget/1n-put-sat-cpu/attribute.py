import sys,gzip,collections,re
# attribute each sample to the deepest frame matching one of the patterns
path=sys.argv[1]; pats=sys.argv[2:]
c=collections.Counter(); tot=0
for line in gzip.open(path,'rt'):
    stack,n=line.rsplit(' ',1); n=int(n); tot+=n
    fr=stack.split(';'); best='(other)'
    for f in fr:
        for p in pats:
            if re.search(p,f): best=p
    c[best]+=n
for k,v in c.most_common(): print('%5.1f%% %s'%(100*v/tot,k))
