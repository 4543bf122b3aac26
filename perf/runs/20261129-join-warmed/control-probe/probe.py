import sys, time, http.client, urllib.parse
# usage: python3 probe.py http://127.0.0.1:PORT SECONDS OUT  (started by hand against n1 of a perf join run as its
# window before the join began; one GET of key1 every 5 ms, one connection, so a second with n < 200 was slower)
# probe.py URL SECONDS OUT: one GET every 5 ms on a keep-alive connection; per second: count, max latency (ms)
url=urllib.parse.urlparse(sys.argv[1]); secs=float(sys.argv[2]); out=open(sys.argv[3],'w')
conn=http.client.HTTPConnection(url.hostname, url.port, timeout=30)
end=time.time()+secs; nxt=time.time(); cur=None; mx=0; n=0
while time.time()<end:
    t0=time.time()
    try:
        conn.request('GET','/v0/entity?id=key1'); r=conn.getresponse(); r.read(); st=r.status
    except Exception as e:
        st=str(e)[:40]; conn=http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    lat=(time.time()-t0)*1000
    sec=time.strftime('%H:%M:%S', time.gmtime(t0))
    if sec!=cur:
        if cur: out.write('%s n=%d max=%.1f ms\n'%(cur,n,mx)); out.flush()
        cur=sec; mx=0; n=0
    n+=1; mx=max(mx,lat)
    if lat>100: out.write('  slow %s.%03d %.1f ms status %s\n'%(sec,int((t0%1)*1000),lat,st)); out.flush()
    nxt+=0.005
    d=nxt-time.time()
    if d>0: time.sleep(d)
    else: nxt=time.time()
